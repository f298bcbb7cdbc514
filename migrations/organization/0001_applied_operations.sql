CREATE TABLE `applied_operations` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`applied_at` integer NOT NULL
);
