ALTER TABLE `audit_log` ADD `key_id` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `key_name` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `ip` text;