/* Intrusive doubly linked lists (the LRU lists of the search cache and of the object-store
 * page cache, the daemon's waiting connections): a node has `prev` and `next` pointers of
 * its own type, a list is a head and a tail pointer. Macros, so one copy serves every node
 * type. Not thread-safe: the caller holds whatever lock guards the list. */
#ifndef LNC_UTIL_LIST_H
#define LNC_UTIL_LIST_H

/* Takes node out of the list (head, tail). A node that is in no list (prev and next NULL, not
 * the head) leaves the list as it was, so callers need not track membership to unlink. */
#define LNC_LIST_UNLINK(head, tail, node) \
  do {                                    \
    if ((node)->prev)                     \
      (node)->prev->next = (node)->next;  \
    else if ((head) == (node))            \
      (head) = (node)->next;              \
    if ((node)->next)                     \
      (node)->next->prev = (node)->prev;  \
    else if ((tail) == (node))            \
      (tail) = (node)->prev;              \
    (node)->prev = (node)->next = NULL;   \
  } while (0)

/* Puts node (in no list) at the tail: the newest end. */
#define LNC_LIST_PUSH_BACK(head, tail, node) \
  do {                                       \
    (node)->prev = (tail);                   \
    (node)->next = NULL;                     \
    if (tail)                                \
      (tail)->next = (node);                 \
    else                                     \
      (head) = (node);                       \
    (tail) = (node);                         \
  } while (0)

/* Puts node (in no list) at the head. */
#define LNC_LIST_PUSH_FRONT(head, tail, node) \
  do {                                        \
    (node)->prev = NULL;                      \
    (node)->next = (head);                    \
    if (head)                                 \
      (head)->prev = (node);                  \
    else                                      \
      (tail) = (node);                        \
    (head) = (node);                          \
  } while (0)

#endif
