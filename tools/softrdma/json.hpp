// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A small JSON writer for the tool's --json output: commas and quoting
// are its business, so every caller's output is valid JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softrdma::json {

// s as a JSON string, quotes included: ", \ and control characters are
// escaped, and bytes that are not UTF-8 become U+FFFD.
std::string quote(std::string_view s);

class Writer {
public:
	Writer &begin_object();
	Writer &end_object();
	Writer &begin_array();
	Writer &end_array();
	Writer &key(std::string_view k);
	Writer &value(std::string_view s);
	Writer &value(const char *s) { return value(std::string_view(s)); }
	Writer &value(const std::string &s) { return value(std::string_view(s)); }
	Writer &value(std::uint64_t n);
	Writer &boolean(bool b);
	Writer &null();
	Writer &value(const std::optional<std::string> &s) { return s ? value(*s) : null(); }
	template <typename T> Writer &value(const std::optional<T> &n)
	{
		return n ? value(static_cast<std::uint64_t>(*n)) : null();
	}
	// The document, with a newline.
	[[nodiscard]] std::string str() const { return out_ + '\n'; }

private:
	void separate();
	std::string out_;
	std::vector<bool> empty_; // per open object or array: nothing in it yet
	bool after_key_ = false;
};

} // namespace softrdma::json
