PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_pending_renames` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`from_key` text NOT NULL,
	`to_name` text NOT NULL
);
--> statement-breakpoint
-- The renames waiting now, in the order they were first recorded (a row updated in place kept its rowid).
INSERT INTO `__new_pending_renames`("from_key", "to_name") SELECT "from_key", "to_name" FROM `pending_renames` ORDER BY rowid;--> statement-breakpoint
DROP TABLE `pending_renames`;--> statement-breakpoint
ALTER TABLE `__new_pending_renames` RENAME TO `pending_renames`;--> statement-breakpoint
PRAGMA foreign_keys=ON;