ALTER TABLE `installation` ADD `suspension_version` integer;--> statement-breakpoint
ALTER TABLE `repositories` ADD `visibility_version` integer;