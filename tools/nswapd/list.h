/* SPDX-License-Identifier: GPL-2.0 */
/* Circular doubly-linked lists with a head node, after the kernel's list.h. */
#ifndef NSWAPD_LIST_H
#define NSWAPD_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
	struct list_head *prev, *next;
};

static inline void list_init(struct list_head *head)
{
	head->prev = head;
	head->next = head;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

/* Puts node first in the list. */
static inline void list_add(struct list_head *node, struct list_head *head)
{
	node->prev = head;
	node->next = head->next;
	head->next->prev = node;
	head->next = node;
}

static inline void list_del(struct list_head *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->prev = node->next = NULL;
}

/* The object of type that has ptr as its member. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define list_entry(ptr, type, member) container_of(ptr, type, member)

#define list_first_entry(head, type, member) list_entry((head)->next, type, member)

#define list_for_each_entry(pos, head, member)					\
	for (pos = list_entry((head)->next, __typeof__(*pos), member);		\
	     &pos->member != (head);						\
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

/* The same, where the body may delete pos. */
#define list_for_each_entry_safe(pos, tmp, head, member)			\
	for (pos = list_entry((head)->next, __typeof__(*pos), member),		\
	     tmp = list_entry(pos->member.next, __typeof__(*pos), member);	\
	     &pos->member != (head);						\
	     pos = tmp, tmp = list_entry(tmp->member.next, __typeof__(*pos), member))

#endif
