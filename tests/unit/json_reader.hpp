// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A strict JSON reader (RFC 8259) for the tests of the tool's --json
// output: anything that is not valid JSON throws; what is valid becomes a
// tree the tests look into. Numbers are kept as their text.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace softrdma::test {

struct JsonValue {
	enum class Kind { null, boolean, number, string, array, object };
	Kind kind = Kind::null;
	bool b = false;
	std::string text; // a number's digits, a string's value (UTF-8)
	std::vector<JsonValue> items; // an array's, or an object's values
	std::vector<std::string> keys; // an object's keys, in order

	[[nodiscard]] const JsonValue &operator[](std::string_view key) const
	{
		for (std::size_t i = 0; i < keys.size(); ++i)
			if (keys[i] == key)
				return items.at(i);
		throw std::out_of_range("no member " + std::string(key));
	}
	[[nodiscard]] const JsonValue &operator[](std::size_t i) const { return items.at(i); }
	[[nodiscard]] bool is_null() const { return kind == Kind::null; }
};

class JsonReader {
public:
	// The one value in s (whitespace around it allowed, nothing else).
	static JsonValue parse(std::string_view s)
	{
		JsonReader r(s);
		r.ws();
		JsonValue v = r.value(0);
		r.ws();
		if (r.i_ != s.size())
			r.fail("text after the value");
		return v;
	}

private:
	explicit JsonReader(std::string_view s) : s_(s) {}

	[[noreturn]] void fail(const std::string &why) const
	{
		throw std::runtime_error("invalid JSON at " + std::to_string(i_) + ": " + why);
	}
	[[nodiscard]] char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
	char next()
	{
		if (i_ >= s_.size())
			fail("unexpected end");
		return s_[i_++];
	}
	void expect(char c)
	{
		if (next() != c)
			fail(std::string("expected '") + c + "'");
	}
	void ws()
	{
		while (i_ < s_.size() &&
		       (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
			++i_;
	}
	void word(std::string_view w)
	{
		if (s_.substr(i_, w.size()) != w)
			fail("bad literal");
		i_ += w.size();
	}
	static bool digit(char c) { return c >= '0' && c <= '9'; }

	// Recursive descent, bounded by depth.
	JsonValue value(int depth) // NOLINT(misc-no-recursion)
	{
		if (depth > 64)
			fail("too deep");
		JsonValue v;
		const char c = peek();
		if (c == '{') {
			v.kind = JsonValue::Kind::object;
			++i_;
			ws();
			if (peek() == '}') {
				++i_;
				return v;
			}
			for (;;) {
				ws();
				if (peek() != '"')
					fail("object key is not a string");
				std::string k = string();
				ws();
				expect(':');
				ws();
				v.keys.push_back(std::move(k));
				v.items.push_back(value(depth + 1));
				ws();
				if (peek() == ',') {
					++i_;
					continue;
				}
				expect('}');
				return v;
			}
		}
		if (c == '[') {
			v.kind = JsonValue::Kind::array;
			++i_;
			ws();
			if (peek() == ']') {
				++i_;
				return v;
			}
			for (;;) {
				ws();
				v.items.push_back(value(depth + 1));
				ws();
				if (peek() == ',') {
					++i_;
					continue;
				}
				expect(']');
				return v;
			}
		}
		if (c == '"') {
			v.kind = JsonValue::Kind::string;
			v.text = string();
			return v;
		}
		if (c == 't' || c == 'f') {
			v.kind = JsonValue::Kind::boolean;
			v.b = c == 't';
			word(v.b ? "true" : "false");
			return v;
		}
		if (c == 'n') {
			word("null");
			return v;
		}
		v.kind = JsonValue::Kind::number;
		v.text = number();
		return v;
	}

	std::string number()
	{
		const std::size_t start = i_;
		if (peek() == '-')
			++i_;
		if (peek() == '0') {
			++i_;
		} else if (digit(peek())) {
			while (digit(peek()))
				++i_;
		} else {
			fail("not a value");
		}
		if (peek() == '.') {
			++i_;
			if (!digit(peek()))
				fail("no digit after '.'");
			while (digit(peek()))
				++i_;
		}
		if (peek() == 'e' || peek() == 'E') {
			++i_;
			if (peek() == '+' || peek() == '-')
				++i_;
			if (!digit(peek()))
				fail("no exponent");
			while (digit(peek()))
				++i_;
		}
		return std::string(s_.substr(start, i_ - start));
	}

	unsigned hex4()
	{
		unsigned v = 0;
		for (int k = 0; k < 4; ++k) {
			const char c = next();
			v <<= 4;
			if (digit(c))
				v |= static_cast<unsigned>(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= static_cast<unsigned>(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v |= static_cast<unsigned>(c - 'A' + 10);
			else
				fail("bad \\u escape");
		}
		return v;
	}

	static void utf8(std::string &out, unsigned cp)
	{
		if (cp < 0x80) {
			out += static_cast<char>(cp);
		} else if (cp < 0x800) {
			out += static_cast<char>(0xc0 | (cp >> 6));
			out += static_cast<char>(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out += static_cast<char>(0xe0 | (cp >> 12));
			out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
			out += static_cast<char>(0x80 | (cp & 0x3f));
		} else {
			out += static_cast<char>(0xf0 | (cp >> 18));
			out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
			out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
			out += static_cast<char>(0x80 | (cp & 0x3f));
		}
	}

	std::string string()
	{
		expect('"');
		std::string out;
		for (;;) {
			const auto c = static_cast<unsigned char>(next());
			if (c == '"')
				return out;
			if (c < 0x20)
				fail("control character in a string");
			if (c >= 0x80) {
				utf8_sequence(out, c);
				continue;
			}
			if (c != '\\') {
				out += static_cast<char>(c);
				continue;
			}
			const char e = next();
			switch (e) {
			case '"':
			case '\\':
			case '/':
				out += e;
				break;
			case 'b':
				out += '\b';
				break;
			case 'f':
				out += '\f';
				break;
			case 'n':
				out += '\n';
				break;
			case 'r':
				out += '\r';
				break;
			case 't':
				out += '\t';
				break;
			case 'u': {
				unsigned cp = hex4();
				if (cp >= 0xd800 && cp <= 0xdbff) {
					expect('\\');
					expect('u');
					const unsigned lo = hex4();
					if (lo < 0xdc00 || lo > 0xdfff)
						fail("lone surrogate");
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					fail("lone surrogate");
				}
				utf8(out, cp);
				break;
			}
			default:
				fail("bad escape");
			}
		}
	}

	// A raw multi-byte character must be well-formed UTF-8.
	void utf8_sequence(std::string &out, unsigned char c)
	{
		std::size_t n = 0;
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3;
		else
			fail("not UTF-8");
		out += static_cast<char>(c);
		for (std::size_t k = 0; k < n; ++k) {
			const auto t = static_cast<unsigned char>(next());
			if ((t & 0xc0) != 0x80)
				fail("not UTF-8");
			out += static_cast<char>(t);
		}
	}

	std::string_view s_;
	std::size_t i_ = 0;
};

} // namespace softrdma::test
