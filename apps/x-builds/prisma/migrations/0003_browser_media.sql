-- Verification in a real browser: a screenshot per viewport beside the motion clip, each with the hash the edge
-- serves as its ETag, and the accessibility findings that did not block the build.
ALTER TABLE job_media DROP CONSTRAINT job_media_kind_check;
ALTER TABLE job_media ADD CONSTRAINT job_media_kind_check CHECK (kind IN ('screenshot', 'screenshot_mobile', 'clip'));
ALTER TABLE job_media ADD COLUMN sha256 text;
UPDATE job_media SET sha256 = encode(sha256(body), 'hex');
ALTER TABLE job_media ALTER COLUMN sha256 SET NOT NULL;

ALTER TABLE build_jobs ADD COLUMN accessibility jsonb NOT NULL DEFAULT '[]';
