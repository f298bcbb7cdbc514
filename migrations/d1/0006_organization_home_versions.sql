CREATE TABLE `organization_homes` (
	`home_key` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
