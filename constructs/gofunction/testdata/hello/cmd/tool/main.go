// Command tool is a main package without the Lambda runtime: the batch
// build leaves it out.
package main

func main() { println("tool") }
