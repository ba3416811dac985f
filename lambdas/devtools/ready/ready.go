// Package ready waits for a local server a test or make dev started
// (DynamoDB Local, Local KMS) to answer, or for it to die trying, and
// stops it.
package ready

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Wait calls probe, each call bounded to two seconds, every interval until
// it succeeds, the process ends (exited is closed; why says how) or
// timeout passes. A server still starting refuses connections, so a
// failed probe is no verdict until the time is up.
func Wait(ctx context.Context, timeout, interval time.Duration, exited <-chan struct{}, why func() error, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		err := probe(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before serving: %v", why())
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		case <-time.After(interval):
		}
	}
}

// Stop ends the server started as the leader of process group pgid:
// SIGTERM to the group, SIGKILL after five seconds, then it waits until
// exited is closed, so that no zombie remains.
func Stop(pgid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
}
