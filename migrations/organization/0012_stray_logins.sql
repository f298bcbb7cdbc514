CREATE TABLE `stray_logins` (
	`login_key` text PRIMARY KEY NOT NULL,
	`recorded_at` integer NOT NULL
);
