package opt_test

import (
	"fmt"

	"github.com/dynastack/dynastack/lambdas/client/opt"
)

func ExampleValue() {
	var absent *[]string
	present := &[]string{"a", "b"}
	fmt.Println(len(opt.Value(absent)), len(opt.Value(present)))
	// Output: 0 2
}

func ExampleSet() {
	var body struct {
		Message *struct{ Title *string }
	}
	opt.Set(&body.Message).Title = new("hello")
	fmt.Println(*body.Message.Title)
	// Output: hello
}
