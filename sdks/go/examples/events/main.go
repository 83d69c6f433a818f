package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	flagops "github.com/flagops/flagops/sdks/go"
)

func main() {
	client, err := flagops.NewClient(flagops.Options{
		URL:    os.Getenv("FLAGOPS_EVAL_URL"),
		SDKKey: os.Getenv("FLAGOPS_SDK_KEY"),
		// One exposure per user, flag and variation in each ExposureFlushInterval (10 s), sent in batches.
		SendExposures: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.WaitReady(ctx); err != nil {
		log.Fatal(err)
	}

	served := map[string]int{}
	for i := 0; i < 100; i++ {
		user := flagops.Context{UserID: fmt.Sprintf("user-%d", i)}
		on, details := client.BoolDetails("checkout-v2", false, user)
		served[details.Variation]++
		client.Bool("checkout-v2", false, user) // the same user, flag and variation: no second exposure
		if on {
			client.Track("checkout-completed", user, 42.5) // what the user did; the stats add up the values
		}
	}
	client.Track("signup", flagops.Context{UserID: "user-1"})

	// Close sends what is still queued (a few tries, within ctx).
	if err := client.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("served:", served)
	fmt.Printf("events: %+v\n", client.EventStats())
}
