#include <libpq-fe.h>
// The statement loop (PostgresKit/StatementLoop.swift) waits on its connections with epoll and is
// woken by an eventfd; Glibc's Swift module has neither.
#include <sys/epoll.h>
#include <sys/eventfd.h>
