// RecordSlot: where an op publishes its last call record, with no lock on the publishing side
// (every completed call publishes; last_call() reads).
//
// The slot points at a node that holds the record. A publisher swaps in a node of its own and
// keeps the node it replaced for its next publication, in a spare the caller holds per thread. A reader counts itself in `readers_`
// while it copies the record out of the node it loaded; a publisher touches the node it
// replaced only once no reader is counted in, so no node is rewritten under a reader. The
// argument rests on the single total order of the seq_cst operations: a reader that loaded the
// replaced node counted itself in before the swap, so the publisher's later read of `readers_`
// sees it until it is done. Publishers wait only while a last_call() runs on the same op.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

namespace tileops {

template <class T>
struct RecordNode {
  std::shared_ptr<const T> value;
};

template <class T>
class RecordSlot {
 public:
  RecordSlot() = default;
  RecordSlot(const RecordSlot&) = delete;
  RecordSlot& operator=(const RecordSlot&) = delete;
  ~RecordSlot() { delete current_.load(std::memory_order_acquire); }

  using Node = RecordNode<T>;

  // The record last published, or nullptr.
  std::shared_ptr<const T> load() const {
    readers_.fetch_add(1, std::memory_order_seq_cst);
    const Node* node = current_.load(std::memory_order_seq_cst);
    std::shared_ptr<const T> copy = node != nullptr ? node->value : nullptr;
    readers_.fetch_sub(1, std::memory_order_release);
    return copy;
  }

  // Publishes `next`, dropping the slot's reference to the record it replaces. `spare` is the
  // calling thread's own: a node from it is used when there is one, and the replaced node,
  // emptied, is left in it.
  void publish(std::shared_ptr<const T> next, Node*& spare) {
    std::unique_ptr<Node> node(std::exchange(spare, nullptr));
    if (!node) node = std::make_unique<Node>();
    node->value = std::move(next);
    Node* replaced = current_.exchange(node.release(), std::memory_order_seq_cst);
    if (replaced == nullptr) return;
    while (readers_.load(std::memory_order_seq_cst) != 0) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    replaced->value.reset();
    spare = replaced;
  }

 private:
  std::atomic<Node*> current_{nullptr};
  mutable std::atomic<int> readers_{0};
};

}  // namespace tileops
