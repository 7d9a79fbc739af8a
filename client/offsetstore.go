package client

// OffsetStore keeps committed consumer offsets durably on disk, one file per
// (consumer, topic, partition). It is safe for concurrent use.
type OffsetStore struct {
	root string
}
