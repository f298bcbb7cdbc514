CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`action` text NOT NULL,
	`actor_user_id` text,
	`actor_login` text,
	`source` text NOT NULL,
	`github_user_id` text NOT NULL,
	`before_seat` integer,
	`before_role` text,
	`after_seat` integer,
	`after_role` text,
	`correlation_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_by_member` ON `audit_log` (`github_user_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_by_time` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TABLE `membership_clock` (
	`id` integer PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `members_by_login` ON `members` (lower("github_login"),`github_user_id`);