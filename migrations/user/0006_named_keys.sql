PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_api_keys` (
	`key_id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`key_hash` text NOT NULL,
	`hint` text NOT NULL,
	`scopes` text NOT NULL,
	`allowed_networks` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`last_used_at` integer
);
--> statement-breakpoint
-- Keys made before names (contract section 18) become keys named "default" with every scope of their
-- kind, any network, a new key_ id (the verdict finds keys by hash, so their KV records still work)
-- and a hint of the prefix alone (their last characters were never stored).
INSERT INTO `__new_api_keys`("key_id", "kind", "name", "name_key", "key_hash", "hint", "scopes", "allowed_networks", "created_at", "expires_at", "last_used_at") SELECT 'key_' || lower(hex(randomblob(10))), "kind", 'default', 'default', "key_hash", CASE "kind" WHEN 'analytics' THEN 'cak_…' ELSE 'cbk_…' END, CASE "kind" WHEN 'analytics' THEN '["analytics:read"]' ELSE '["members:read","members:write"]' END, '[]', "created_at", "expires_at", "last_used_at" FROM `api_keys`;--> statement-breakpoint
DROP TABLE `api_keys`;--> statement-breakpoint
ALTER TABLE `__new_api_keys` RENAME TO `api_keys`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_by_name` ON `api_keys` (`kind`,`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_by_hash` ON `api_keys` (`key_hash`);