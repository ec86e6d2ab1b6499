//go:build unix && !linux

package mlb

const mapPopulate = 0
