// Package flagops evaluates flagops feature flags in process: it keeps an environment's snapshot current
// (GET /v1/snapshot, the /v1/stream feed, deltas) and evaluates each flag locally with the same order and
// results as the flagops evaluation server.
//
//	client, err := flagops.NewClient(flagops.Options{URL: "http://127.0.0.1:4001", SDKKey: key})
//	defer client.Close(context.Background())
//	client.WaitReady(ctx)
//	on := client.Bool("checkout-v2", false, flagops.Context{UserID: "u-42"})
package flagops

// Snapshot is one compiled version of an environment's flags; safe for concurrent use, never modified.
type Snapshot struct {
	env *environment
}

// ParseSnapshot compiles the body of GET /v1/snapshot.
func ParseSnapshot(body []byte) (*Snapshot, error) {
	w, err := parseSnapshot(body)
	if err != nil {
		return nil, err
	}
	env, err := compileSnapshot(w)
	if err != nil {
		return nil, err
	}
	return &Snapshot{env: env}, nil
}

// Version is the snapshot's version.
func (s *Snapshot) Version() int64 { return s.env.version }

// Environment is the name of the snapshot's environment (dev, staging or prod).
func (s *Snapshot) Environment() string { return s.env.environment }

// Keys is every flag key of the snapshot, sorted.
func (s *Snapshot) Keys() []string { return s.env.keys() }

// Evaluate is one flag's result for ctx; an unknown key gives Reason flag_not_found and a nil Value.
func (s *Snapshot) Evaluate(flagKey string, ctx Context) (r Result) {
	s.env.evaluateInto(flagKey, &ctx, nil, &r)
	return
}
