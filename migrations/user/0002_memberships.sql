CREATE TABLE `memberships` (
	`org_key` text PRIMARY KEY NOT NULL,
	`member` integer NOT NULL,
	`version` integer NOT NULL
);
