package flagops

import (
	"fmt"
	"testing"
	"time"
)

// A bootstrap is served until the first refresh, which replaces it whole: nothing says its content is what
// the server served at its version.

const flagDisabled = `{"enabled":false,"rolloutPct":100,"valueOn":true,"valueOff":false,"rules":[],"killed":false,"archived":false,"defaultValue":false}`

func bootstrapOf(environment string, version int64, flags map[string]string) []byte {
	text := fmt.Sprintf(`{"version":%d,"environment":%q,"segments":{},"flags":{`, version, environment)
	sep := ""
	for k, v := range flags {
		text += fmt.Sprintf(`%s%q:%s`, sep, k, v)
		sep = ","
	}
	return []byte(text + "}}")
}

func TestBootstrapOfAnotherEnvironmentAtTheSameVersionIsReplaced(t *testing.T) {
	f := newFakeServer(t, map[string]string{"d": flagOn, "c": flagOn})
	c := startClient(t, f, func(o *Options) {
		o.PollInterval = time.Hour
		o.Bootstrap = bootstrapOf("dev", 1, map[string]string{"d": flagDisabled, "c": flagOn})
	})
	eventually(t, "the server's snapshot is served", func() bool {
		return c.Status() == StatusReady && c.Bool("d", false, user)
	})
	first := f.snapshotRequests()[0]
	if since, etag := first.URL.Query().Get("since"), first.Header.Get("If-None-Match"); since != "" || etag != "" {
		t.Errorf("the first refresh named the bootstrap's version: since=%q, If-None-Match=%q", since, etag)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.streamReq) > 0 && f.streamReq[0].URL.Query().Get("since") != "" {
		t.Errorf("the stream was opened since the bootstrap's version: %s", f.streamReq[0].URL)
	}
}

func TestStreamPatchIsNotAppliedToABootstrap(t *testing.T) {
	f := newFakeServer(t, map[string]string{"d": flagOn, "c": flagOn})
	f.setFailing(503) // the first refresh fails: the stream's patch comes while the bootstrap is served
	c := startClient(t, f, func(o *Options) {
		o.PollInterval = time.Hour
		o.Bootstrap = bootstrapOf("prod", 1, map[string]string{"d": flagKilled, "c": flagOn})
	})
	eventually(t, "the stream is open", func() bool { return c.streamUp.Load() })
	version := f.set(map[string]string{"c": flagKilled})
	f.setFailing(0)
	eventually(t, "the server's snapshot is served", func() bool {
		v, _ := c.Version()
		return v == version && c.Status() == StatusReady && c.Bool("d", false, user)
	})
	if r := c.Evaluate("c", user); r.Reason != ReasonKilled {
		t.Errorf("c after its kill: %+v", r)
	}
}
