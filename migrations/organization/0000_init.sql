CREATE TABLE `collaborators` (
	`repo_key` text NOT NULL,
	`github_user_id` text NOT NULL,
	PRIMARY KEY(`repo_key`, `github_user_id`)
);
--> statement-breakpoint
CREATE TABLE `installation` (
	`id` integer PRIMARY KEY NOT NULL,
	`login` text NOT NULL,
	`installation_id` integer NOT NULL,
	`installed_at` integer NOT NULL,
	`blocked` integer NOT NULL,
	`plan` text NOT NULL,
	`subscription_status` text NOT NULL,
	`billed_through_service` integer NOT NULL,
	`purchased_seats` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `members` (
	`github_user_id` text PRIMARY KEY NOT NULL,
	`github_login` text NOT NULL,
	`work_email` text NOT NULL,
	`role` text NOT NULL,
	`seat` integer NOT NULL,
	`is_bot` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `repositories` (
	`repo_key` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`private` integer NOT NULL
);
