// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "json.hpp"

#include <array>

namespace softrdma::json {

namespace {

// The length of the UTF-8 sequence at s[i], 0 if it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i)
{
	const auto b = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned c = b(i);
	std::size_t n = 0;
	unsigned lo = 0x80;
	unsigned hi = 0xbf;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; // no overlong forms
		if (c == 0xed)
			hi = 0x9f; // no surrogates
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f; // nothing above U+10FFFF
	} else {
		return 0;
	}
	if (i + n > s.size())
		return 0;
	for (std::size_t k = 1; k < n; ++k) {
		const unsigned t = b(i + k);
		if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xbf))
			return 0;
	}
	return n;
}

} // namespace

std::string quote(std::string_view s)
{
	static constexpr std::array<char, 16> hex{'0', '1', '2', '3', '4', '5', '6', '7',
						  '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
	std::string out = "\"";
	for (std::size_t i = 0; i < s.size();) {
		const auto c = static_cast<unsigned char>(s[i]);
		const std::size_t n = utf8_length(s, i);
		if (n == 0) {
			out += "\\ufffd";
			++i;
		} else if (n > 1) {
			out += s.substr(i, n);
			i += n;
		} else {
			if (c == '"' || c == '\\') {
				out += '\\';
				out += static_cast<char>(c);
			} else if (c == '\n') {
				out += "\\n";
			} else if (c == '\t') {
				out += "\\t";
			} else if (c < 0x20 || c == 0x7f) {
				out += "\\u00";
				out += hex.at(c >> 4);
				out += hex.at(c & 0xf);
			} else {
				out += static_cast<char>(c);
			}
			++i;
		}
	}
	out += '"';
	return out;
}

void Writer::separate()
{
	if (after_key_) {
		after_key_ = false;
		return;
	}
	if (!empty_.empty()) {
		if (!empty_.back())
			out_ += ',';
		empty_.back() = false;
	}
}

Writer &Writer::begin_object()
{
	separate();
	out_ += '{';
	empty_.push_back(true);
	return *this;
}

Writer &Writer::end_object()
{
	out_ += '}';
	empty_.pop_back();
	return *this;
}

Writer &Writer::begin_array()
{
	separate();
	out_ += '[';
	empty_.push_back(true);
	return *this;
}

Writer &Writer::end_array()
{
	out_ += ']';
	empty_.pop_back();
	return *this;
}

Writer &Writer::key(std::string_view k)
{
	separate();
	out_ += quote(k);
	out_ += ':';
	after_key_ = true;
	return *this;
}

Writer &Writer::value(std::string_view s)
{
	separate();
	out_ += quote(s);
	return *this;
}

Writer &Writer::value(std::uint64_t n)
{
	separate();
	out_ += std::to_string(n);
	return *this;
}

Writer &Writer::boolean(bool b)
{
	separate();
	out_ += b ? "true" : "false";
	return *this;
}

Writer &Writer::null()
{
	separate();
	out_ += "null";
	return *this;
}

} // namespace softrdma::json
