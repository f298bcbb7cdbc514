CREATE TABLE `quotas` (
	`kind` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`used` integer NOT NULL
);
