CREATE TABLE `org_api_keys` (
	`key_id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`key_hash` text NOT NULL,
	`hint` text NOT NULL,
	`scopes` text NOT NULL,
	`repositories` text NOT NULL,
	`allowed_networks` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	`expires_at` integer,
	`last_used_at` integer,
	`window_start` integer,
	`used` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_api_keys_by_name` ON `org_api_keys` (`kind`,`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `org_api_keys_by_hash` ON `org_api_keys` (`key_hash`);--> statement-breakpoint
ALTER TABLE `audit_log` ADD `key_id` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `key_name` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `ip` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `key_kind` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `key_scopes` text;