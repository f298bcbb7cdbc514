CREATE TABLE `index_relogin` (
	`id` integer PRIMARY KEY NOT NULL,
	`login` text NOT NULL,
	`after` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `waiting_renames` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`from_key` text NOT NULL,
	`to_login` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `waiting_renames_from` ON `waiting_renames` (`from_key`,`id`);--> statement-breakpoint
-- Edited by hand: SQLite adds a NOT NULL column only with a default. Every object so far is named by
-- its folded login (ASCII lower-casing, as SQLite's lower() does), which is its home key.
ALTER TABLE `installation` ADD `home_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `installation` SET `home_key` = lower(`login`);--> statement-breakpoint
ALTER TABLE `installation` ADD `account_id` integer;