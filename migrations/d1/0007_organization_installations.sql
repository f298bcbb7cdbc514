CREATE TABLE `organization_installations` (
	`installation_id` integer PRIMARY KEY NOT NULL,
	`home_key` text NOT NULL
);
