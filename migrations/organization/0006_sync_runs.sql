CREATE TABLE `sync_runs` (
	`id` integer PRIMARY KEY NOT NULL,
	`trigger` text NOT NULL,
	`trigger_key` text NOT NULL,
	`installation_id` integer NOT NULL,
	`state` text NOT NULL,
	`instance_created` integer DEFAULT false NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`steps` text NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE INDEX `sync_runs_by_trigger` ON `sync_runs` (`trigger_key`);