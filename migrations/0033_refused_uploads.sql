-- Uploads the decoder refused (not a whole image, too many pixels, too many scans): each counts against its
-- sender's upload quotas, account and address, with the bytes it sent, as a stored photo counts, so that
-- sending photo bombs costs the sender the quota that decoding them would have. Kept a day, as long as the
-- quotas look back (housekeeping).
CREATE TABLE refused_uploads (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id bigint REFERENCES users (id) ON DELETE CASCADE,
    uploaded_from text CHECK (char_length(uploaded_from) <= 64),
    size integer NOT NULL CHECK (size >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refused_uploads_owner_created_idx ON refused_uploads (owner_id, created_at);
CREATE INDEX refused_uploads_from_created_idx ON refused_uploads (uploaded_from, created_at) WHERE uploaded_from IS NOT NULL;
