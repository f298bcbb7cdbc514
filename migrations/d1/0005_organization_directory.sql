CREATE TABLE `organization_accounts` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`home_key` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `organization_names` (
	`login_key` text PRIMARY KEY NOT NULL,
	`home_key` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `organization_names_by_home` ON `organization_names` (`home_key`);