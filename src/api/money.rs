//! An amount of money, as the contract writes it ([`Money`]): an object with `amount`, an exact
//! decimal string (never a floating-point number: `"49.90"`, not `49.9`), and `currency`, an
//! ISO 4217 code in capitals (`"EUR"`). The amount is not negative (a price, a fee; an endpoint
//! that needs a credit says so with a field of its own), has at most 15 digits before the point,
//! no sign, no exponent and no leading zero, and at most as many decimals as the currency has
//! (two for `EUR`, none for `JPY`, three for `KWD`): the partner's number is kept exactly as
//! written. Anything else is refused with `parameter_invalid` naming the field (`price.amount`,
//! `price.currency`, or `price` when the two disagree), before a handler runs.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::edge::extract::{invalid, text_of};

/// The ISO 4217 codes of currencies in circulation, in order (funds, and the codes of precious
/// metals, testing and "no currency" left out); the decimals that differ from two below.
const CURRENCIES: &[&str] = &[
    "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BHD",
    "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF",
    "CLP", "CNY", "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN",
    "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD",
    "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES",
    "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
    "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN",
    "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP",
    "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK",
    "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT",
    "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VED", "VES",
    "VND", "VUV", "WST", "XAF", "XCD", "XCG", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
];

/// The currencies with no minor unit.
const NO_DECIMALS: [&str; 16] = [
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV",
    "XAF", "XOF", "XPF",
];

/// The currencies with three decimals.
const THREE_DECIMALS: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

/// Digits before the point, at most: a quadrillion less a unit of anything.
const MAX_WHOLE_DIGITS: usize = 15;

/// A currency code in circulation (ISO 4217), such as `EUR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Currency(&'static str);

impl Currency {
    /// The currency `code` names, in capitals.
    pub fn new(code: &str) -> Option<Currency> {
        CURRENCIES
            .iter()
            .find(|known| **known == code)
            .map(|known| Currency(known))
    }

    /// How many decimals its amounts may have.
    pub fn decimals(self) -> usize {
        if NO_DECIMALS.contains(&self.0) {
            0
        } else if THREE_DECIMALS.contains(&self.0) {
            3
        } else {
            2
        }
    }

    pub fn code(self) -> &'static str {
        self.0
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const REQUIREMENT: &str =
            "must be a currency code in circulation, in capitals (ISO 4217: EUR, USD, GBP)";
        let value = text_of(deserializer, REQUIREMENT)?;
        Currency::new(&value).ok_or_else(|| invalid(REQUIREMENT))
    }
}

impl PartialSchema for Currency {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[A-Z]{3}$"))
            .description(Some(
                "A currency code in circulation, ISO 4217, in capitals (`EUR`, `USD`).",
            ))
            .examples(["EUR"])
            .into()
    }
}

impl ToSchema for Currency {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Currency")
    }
}

/// An exact decimal amount, as written: `49.90`; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Amount(String);

impl Amount {
    /// `value` when it is a decimal number written plainly: digits, at most one point with
    /// digits after it, no sign, no leading zero but the one before a point.
    pub fn new(value: &str) -> Option<Amount> {
        let (whole, fraction) = match value.split_once('.') {
            Some((whole, fraction)) => (whole, Some(fraction)),
            None => (value, None),
        };
        let digits =
            |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
        let whole_ok = digits(whole)
            && whole.len() <= MAX_WHOLE_DIGITS
            && (whole == "0" || !whole.starts_with('0'));
        let fraction_ok = fraction.is_none_or(digits);
        (whole_ok && fraction_ok).then(|| Amount(value.to_owned()))
    }

    /// How many decimals it is written with.
    pub fn decimals(&self) -> usize {
        self.0
            .split_once('.')
            .map_or(0, |(_, fraction)| fraction.len())
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const REQUIREMENT: &str = "must be an exact decimal amount written as a string, \
                                   such as \"49.90\" (no sign, at most 15 digits before the point)";
        let value = text_of(deserializer, REQUIREMENT)?;
        Amount::new(&value).ok_or_else(|| invalid(REQUIREMENT))
    }
}

impl PartialSchema for Amount {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^(0|[1-9][0-9]{0,14})(\.[0-9]+)?$"))
            .description(Some(
                "An exact decimal amount, as a string (never a floating-point number): no \
                 sign, at most as many decimals as the currency has.",
            ))
            .examples(["49.90"])
            .into()
    }
}

impl ToSchema for Amount {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Amount")
    }
}

/// An amount in a currency; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[schema(
    description = "Money: an exact decimal `amount`, as a string, and its `currency`.",
    example = json!({"amount": "49.90", "currency": "EUR"})
)]
pub struct Money {
    /// The amount, exact: at most as many decimals as the currency has.
    pub amount: Amount,
    /// The currency.
    pub currency: Currency,
}

impl Money {
    /// `amount` of `currency`, when the currency allows its decimals.
    pub fn new(amount: Amount, currency: Currency) -> Option<Money> {
        (amount.decimals() <= currency.decimals()).then_some(Money { amount, currency })
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The two fields, each read (and named when refused) on its own.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Written {
            amount: Amount,
            currency: Currency,
        }
        let Written { amount, currency } = Written::deserialize(deserializer)?;
        Money::new(amount, currency).ok_or_else(|| {
            invalid(match currency.decimals() {
                0 => "must have an amount with at most 0 decimals, as its currency has none",
                3 => "must have an amount with at most 3 decimals, as its currency has",
                _ => "must have an amount with at most 2 decimals, as its currency has",
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::extract::parse_json;
    use crate::errors::ErrorCode;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Priced {
        price: Money,
    }

    #[test]
    fn the_currencies_are_in_order_once_and_their_decimals_known() {
        let mut sorted = CURRENCIES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, CURRENCIES);
        for code in NO_DECIMALS.iter().chain(&THREE_DECIMALS) {
            assert!(Currency::new(code).is_some(), "{code}");
        }
        assert_eq!(Currency::new("EUR").unwrap().decimals(), 2);
        assert_eq!(Currency::new("JPY").unwrap().decimals(), 0);
        assert_eq!(Currency::new("KWD").unwrap().decimals(), 3);
        for unknown in ["eur", "EURO", "XXX", "XAU", "ABC", "BGN", "HRK", ""] {
            assert_eq!(Currency::new(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn an_amount_is_a_plain_decimal_kept_as_written() {
        for good in ["0", "0.5", "49.90", "1000", "999999999999999.99"] {
            assert_eq!(Amount::new(good).unwrap().to_string(), good);
        }
        for bad in [
            "",
            "-1",
            "+1",
            "1e3",
            "01",
            "00.5",
            ".5",
            "5.",
            "1,5",
            " 1",
            "1 ",
            "NaN",
            "1000000000000000",
            "１",
        ] {
            assert_eq!(Amount::new(bad), None, "{bad}");
        }
    }

    #[test]
    fn money_in_a_body_is_read_exactly_and_a_bad_part_named() {
        let priced =
            parse_json::<Priced>(br#"{"price":{"amount":"49.90","currency":"EUR"}}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&priced.price).unwrap(),
            r#"{"amount":"49.90","currency":"EUR"}"#
        );
        for (body, param, says) in [
            (
                r#"{"price":{"amount":49.9,"currency":"EUR"}}"#,
                "price.amount",
                "exact decimal",
            ),
            (
                r#"{"price":{"amount":"-5","currency":"EUR"}}"#,
                "price.amount",
                "no sign",
            ),
            (
                r#"{"price":{"amount":"5","currency":"eur"}}"#,
                "price.currency",
                "ISO 4217",
            ),
            (
                r#"{"price":{"amount":"4.999","currency":"EUR"}}"#,
                "price",
                "at most 2 decimals",
            ),
            (
                r#"{"price":{"amount":"100.5","currency":"JPY"}}"#,
                "price",
                "at most 0 decimals",
            ),
            (r#"{"price":"49.90 EUR"}"#, "price", ""),
        ] {
            let error = parse_json::<Priced>(body.as_bytes()).unwrap_err();
            assert_eq!(error.code(), ErrorCode::ParameterInvalid, "{body}");
            assert_eq!(error.param(), Some(param), "{body}");
            assert!(
                error.message().contains(says),
                "{body}: {}",
                error.message()
            );
        }
        let error = parse_json::<Priced>(br#"{"price":{"amount":"5"}}"#).unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterMissing);
        assert_eq!(error.param(), Some("price.currency"));
        let error = parse_json::<Priced>(br#"{"price":{"amount":"5","currency":"EUR","tax":"1"}}"#)
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterUnknown);
    }
}
