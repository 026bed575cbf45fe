-- The gram bitmaps' builder wrote only the chunks of its first step (the first 122,880 cafe ids) for a
-- gram built after the cafes were there: a search that took its candidates from them missed every
-- later cafe. Every gram is built again from the texts (ORed into what is there; `GramBitmapBuilder`);
-- until a gram is ready again, searches look its keywords up in the gram index instead.
UPDATE search_bitmap_grams SET ready = false, next_chunk = -1;
