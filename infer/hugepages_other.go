//go:build !linux

package infer

import "errors"

func hugeAlloc(n int) ([]byte, func() error, error) {
	return nil, nil, errors.New("not supported on this system")
}
