CREATE TABLE `held_logins` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`login_key` text NOT NULL,
	`delivery_key` text NOT NULL,
	`state` text NOT NULL,
	`recorded_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `held_logins_state` ON `held_logins` (`state`,`seq`);