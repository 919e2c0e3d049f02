package main

import "github.com/urfave/cli/v2"

// reportCommand prints the tables of a profile.
var reportCommand = &cli.Command{
	Name:      "report",
	Usage:     "print the tables of a profile",
	ArgsUsage: "[profile]",
	Action: func(c *cli.Context) error {
		return nil // TODO(report): implemented in package report
	},
}
