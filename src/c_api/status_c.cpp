#include "resplock/core/status.h"

#define RESPLOCK_STATUS_TEXT(name, text) text,

namespace {
constexpr const char* status_text[] = {RESPLOCK_STATUS_LIST(RESPLOCK_STATUS_TEXT)};
constexpr int status_count = static_cast<int>(sizeof status_text / sizeof status_text[0]);
}  // namespace

extern "C" const char* resplock_status_str(resplock_status_t status) {
    const int i = static_cast<int>(status);
    return (i >= 0 && i < status_count) ? status_text[i] : "unknown status";
}
