package awsconf_test

import "os"

// unsetenv removes a variable t.Setenv registered (restored at cleanup):
// the SDK tests presence, not value.
func unsetenv(k string) error { return os.Unsetenv(k) }
