package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	flagops "github.com/flagops/flagops/sdks/go"
)

func main() {
	client, err := flagops.NewClient(flagops.Options{
		URL:    os.Getenv("FLAGOPS_EVAL_URL"), // e.g. http://127.0.0.1:4001
		SDKKey: os.Getenv("FLAGOPS_SDK_KEY"),  // svc_sdk_…
	})
	if err != nil {
		log.Fatal(err) // only options that cannot work: no URL, no key
	}
	// On shutdown: stops the stream and the polling, waiting at most until the context ends.
	defer client.Close(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.WaitReady(ctx); err != nil {
		log.Fatal(err) // the key was refused, or no snapshot within 5 s
	}
	fmt.Println("status:", client.Status())

	user := flagops.Context{UserID: "user-1", Attributes: map[string]any{"plan": "beta"}}
	fmt.Println("checkout-v2 for user-1:", client.Bool("checkout-v2", false, user))
	fmt.Println("banner:", client.String("banner-text", "Welcome", flagops.Context{}))

	// Why: the reason, the variation, the rule or the user's bucket, shaped like a /v1/evaluate entry.
	_, details := client.BoolDetails("checkout-v2", false, flagops.Context{UserID: "user-42"})
	text, _ := json.Marshal(details)
	fmt.Println(string(text))

	// Something wrong is never a panic or an error: the default you gave, with the reason.
	_, missing := client.BoolDetails("no-such-flag", false, flagops.Context{})
	fmt.Println(missing.Reason, missing.ErrorCode)
}
