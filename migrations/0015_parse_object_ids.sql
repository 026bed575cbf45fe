-- Objects imported from a Parse app keep their Parse objectId (`cafe import-parse`): `/parse`
-- resolves it (GET/PUT/DELETE by old id, `CafeMasterObjectId` naming an old id, `where` on
-- objectId) and answers with it, so an installed app's stored ids keep working. Objects made here
-- have none. A row stays after its object is deleted: the id then names nothing, as an old id should.
CREATE TABLE parse_object_ids (
    kind      text   NOT NULL CHECK (kind IN ('user', 'cafe', 'comment', 'file')),
    object_id text   NOT NULL CHECK (char_length(object_id) BETWEEN 1 AND 128),
    id        bigint NOT NULL,
    PRIMARY KEY (kind, object_id),
    UNIQUE (kind, id)
);
