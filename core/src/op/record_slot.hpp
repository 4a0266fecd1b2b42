// RecordSlot: where an op publishes its last call record, with no lock on the publishing side
// (every completed call publishes; last_call() reads).
//
// The slot points at a node that holds the record. A publisher swaps in a node of its own and
// keeps the node it replaced for its next publication. A reader counts itself in `readers_`
// while it copies the record out of the node it loaded; a publisher touches the node it
// replaced only once no reader is counted in, so no node is rewritten under a reader. The
// argument rests on the single total order of the seq_cst operations: a reader that loaded the
// replaced node counted itself in before the swap, so the publisher's later read of `readers_`
// sees it until it is done. Publishers wait only while a last_call() runs on the same op.
#pragma once

#include <atomic>
#include <memory>

namespace tileops {

template <class T>
class RecordSlot {
 public:
  RecordSlot() = default;
  RecordSlot(const RecordSlot&) = delete;
  RecordSlot& operator=(const RecordSlot&) = delete;
  ~RecordSlot() { delete current_.load(std::memory_order_acquire); }

  // The record last published, or nullptr.
  std::shared_ptr<const T> load() const {
    readers_.fetch_add(1, std::memory_order_seq_cst);
    const Node* node = current_.load(std::memory_order_seq_cst);
    std::shared_ptr<const T> copy = node != nullptr ? node->value : nullptr;
    readers_.fetch_sub(1, std::memory_order_release);
    return copy;
  }

  // Publishes `next`, dropping the slot's reference to the record it replaces.
  void publish(std::shared_ptr<const T> next) {
    std::unique_ptr<Node> node = std::move(spare_node_);
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
    spare_node_.reset(replaced);
  }

 private:
  struct Node {
    std::shared_ptr<const T> value;
  };

  // The node this thread's last publication replaced, empty and ready for its next one.
  static inline thread_local std::unique_ptr<Node> spare_node_;

  std::atomic<Node*> current_{nullptr};
  mutable std::atomic<int> readers_{0};
};

}  // namespace tileops
