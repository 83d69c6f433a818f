package flagops

import "testing"

// newOfflineClient is a client serving a fixed snapshot, without a server (Options.Bootstrap, Offline).
func newOfflineClient(t testing.TB, snapshot string) *Client {
	t.Helper()
	c, err := NewClient(Options{Offline: true, Bootstrap: []byte(snapshot)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
