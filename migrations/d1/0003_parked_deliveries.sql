CREATE TABLE `parked_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery` text NOT NULL,
	`event` text NOT NULL,
	`message` text NOT NULL,
	`attempts` integer NOT NULL,
	`parked_at` integer NOT NULL
);
