package main

func main() { println("other") }
