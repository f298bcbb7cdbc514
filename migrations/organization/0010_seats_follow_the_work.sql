CREATE TABLE `author_activity` (
	`login_key` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `known_pull_requests` (
	`pr_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `seat_requests` (
	`github_user_id` text PRIMARY KEY NOT NULL,
	`since` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `seat_requests_by_since` ON `seat_requests` (`since`,`github_user_id`);--> statement-breakpoint
CREATE TABLE `settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`seat_assignment` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `audit_log` ADD `before_seat_assignment` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `after_seat_assignment` text;