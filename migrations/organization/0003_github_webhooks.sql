CREATE TABLE `applied_deliveries` (
	`delivery_key` text PRIMARY KEY NOT NULL,
	`applied_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `pending_renames` (
	`from_key` text PRIMARY KEY NOT NULL,
	`to_name` text NOT NULL
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_members` (
	`github_user_id` text PRIMARY KEY NOT NULL,
	`github_login` text NOT NULL,
	`work_email` text,
	`role` text NOT NULL,
	`seat` integer NOT NULL,
	`is_bot` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_members`("github_user_id", "github_login", "work_email", "role", "seat", "is_bot") SELECT "github_user_id", "github_login", "work_email", "role", "seat", "is_bot" FROM `members`;--> statement-breakpoint
DROP TABLE `members`;--> statement-breakpoint
ALTER TABLE `__new_members` RENAME TO `members`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `members_by_login` ON `members` (lower("github_login"),`github_user_id`);--> statement-breakpoint
ALTER TABLE `installation` ADD `installed` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `github_id` integer;--> statement-breakpoint
ALTER TABLE `repositories` ADD `removed` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `repositories_github_id` ON `repositories` (`github_id`);