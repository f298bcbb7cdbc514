CREATE TABLE `account` (
	`id` integer PRIMARY KEY NOT NULL,
	`github_user_id` text NOT NULL,
	`github_login` text NOT NULL,
	`blocked` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`kind` text PRIMARY KEY NOT NULL,
	`key_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer
);
