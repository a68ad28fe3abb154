CREATE TABLE queue_settings (
  id             smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  paused         boolean NOT NULL DEFAULT false,
  max_concurrent integer NOT NULL DEFAULT 4 CHECK (max_concurrent >= 1),
  max_queue      integer NOT NULL DEFAULT 100 CHECK (max_queue >= 0),
  updated_at     timestamptz(3) NOT NULL DEFAULT now()
);
INSERT INTO queue_settings (id) VALUES (1);
