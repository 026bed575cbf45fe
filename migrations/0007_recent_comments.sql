-- 0007: everyone's recent comments, newest first (GET /v1/comments), and the photo wall
-- (withImage=true): each a keyset walk of its own index.
CREATE INDEX comments_created_idx ON comments (created_at DESC, id DESC);
CREATE INDEX comments_with_image_created_idx ON comments (created_at DESC, id DESC) WHERE image_id IS NOT NULL;
