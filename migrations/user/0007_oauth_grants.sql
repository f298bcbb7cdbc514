CREATE TABLE `oauth_grants` (
	`grant_id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`client_name` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`approved_at` integer NOT NULL,
	`last_used_at` integer
);
