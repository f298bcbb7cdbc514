-- Edited by hand: SQLite adds a NOT NULL column only with a default. Until now every entry was keyed
-- by the organization's lower-cased login, which is also its home key.
ALTER TABLE `memberships` ADD `login_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `memberships` SET `login_key` = `org_key`;--> statement-breakpoint
CREATE INDEX `memberships_by_login` ON `memberships` (`login_key`,`org_key`);