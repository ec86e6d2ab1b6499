module github.com/krafla/krafla/asm/_gen

go 1.26.0
