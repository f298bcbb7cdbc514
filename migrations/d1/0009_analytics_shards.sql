CREATE TABLE `analytics_moves` (
	`home_key` text PRIMARY KEY NOT NULL,
	`login` text NOT NULL,
	`from_shard` text NOT NULL,
	`to_shard` text NOT NULL,
	`state` text NOT NULL,
	`rows_copied` integer NOT NULL,
	`copy_table` text,
	`copy_after` text,
	`error` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `analytics_placements` (
	`home_key` text PRIMARY KEY NOT NULL,
	`shard` text NOT NULL,
	`moving_to` text
);
--> statement-breakpoint
CREATE INDEX `analytics_placements_by_shard` ON `analytics_placements` (`shard`);--> statement-breakpoint
CREATE TABLE `shard_counters` (
	`one` integer PRIMARY KEY NOT NULL,
	`pull_requests` integer NOT NULL,
	`next_sequence` integer NOT NULL
);
