// Key names built in one fixed buffer: a lock kind's companion keys (BASE:q, BASE:f:TOKEN, ...),
// made once per call, so that the attempts and blocks below it add no copies of their own to the
// stack. Internal: not installed.
#ifndef RESPLOCK_NAMES_HPP
#define RESPLOCK_NAMES_HPP

#include <cstddef>
#include <cstring>
#include <string_view>

namespace resplock::detail {

// N bytes: the caller sizes it for the longest names it adds.
template <std::size_t N>
class NameBuffer {
  public:
    // text_ is read only up to len_: zeroing it first would be wasted work.
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init)
    NameBuffer() noexcept {}  // cppcheck-suppress uninitMemberVar
    NameBuffer(const NameBuffer&) = delete;
    NameBuffer& operator=(const NameBuffer&) = delete;
    ~NameBuffer() = default;

    // Appends a, b and c (which must fit) and returns a view of the three together, valid as
    // long as the buffer.
    std::string_view add(std::string_view a, std::string_view b, std::string_view c = {}) noexcept {
        const std::size_t start = len_;
        for (const std::string_view part : {a, b, c}) {
            if (part.empty()) continue;  // {} has no data to copy from
            std::memcpy(text_ + len_, part.data(), part.size());
            len_ += part.size();
        }
        return {text_ + start, len_ - start};
    }

  private:
    char text_[N];
    std::size_t len_ = 0;
};

}  // namespace resplock::detail

#endif  // RESPLOCK_NAMES_HPP
